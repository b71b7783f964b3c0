"""Explicit-state exploration: every reachable state of a table at fixed parameter values."""
