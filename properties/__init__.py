"""turnbound.properties: invariants, exploration, Hypothesis, proofs, mutation, conformance, CLI.

Every engine here is generic over tables (`turnbound.reference.table.Table`).
"""
