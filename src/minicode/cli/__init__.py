"""The command line: `cli.main` parses it and picks a frontend (`cli/frontends/`)."""
