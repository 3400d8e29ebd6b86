"""The package's architecture read from its source: layers, the front door, markers, rules written once, parameters."""
