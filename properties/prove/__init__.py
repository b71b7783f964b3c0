"""Proofs for every parameter value: the z3 encoding, k-induction, strengthening, witnesses."""
