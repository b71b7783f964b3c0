"""An implementation under test against the reference: cases, vectors, wire protocol, logs."""
