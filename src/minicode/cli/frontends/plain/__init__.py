"""The text frontend of pipe and one-shot modes: no prompt_toolkit, no rich."""
