"""The SQLite store (treelab.store): saves and loads, writers and deltas, merges, the position table, damaged files."""
