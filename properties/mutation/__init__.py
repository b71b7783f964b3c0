"""Mutation testing: faults made in a table, and which engine tells each from the original."""
