"""Helpers more than one frontend uses: showing untrusted text, did-you-mean, /check, /permissions and /undo lines."""
