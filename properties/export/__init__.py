"""A table or its traces in another tool's format: ITF (Apalache, Quint), Promela (SPIN)."""
