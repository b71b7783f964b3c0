"""The `turnbound` command line: one module per command, registered on one click application."""
