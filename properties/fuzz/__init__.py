"""The Hypothesis state machine generated from a table, and what a fuzzing session reports."""
