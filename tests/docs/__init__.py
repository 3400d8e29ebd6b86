"""The documentation says what is true: pages, sample outputs, the site, references, notebooks."""
