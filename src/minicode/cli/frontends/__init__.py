"""The frontends: `plain` (pipe, one-shot), `json` (--output json|stream-json), `tui` (full screen); `shared` holds what more than one uses."""
