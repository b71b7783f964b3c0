"""turnbound.reference: the table model, its loader and the table-driven interpreter.

The table is the single description of a budget discipline; everything here is
generic over tables and knows nothing about any particular profile.
"""
