"""Pictures of a table: one graph model, written as DOT, GraphML or rendered by Graphviz."""
