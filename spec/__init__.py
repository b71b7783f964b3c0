"""The bundled tables, cases, schemas and vectors (data only; this file makes them installable)."""
