"""The command line (treelab.cli) across commands: its vocabulary, output files, hostile input, fuzzing."""
