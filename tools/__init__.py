"""Developer tools of the repository (not shipped in the package): tools/docgen renders the docs site's reference."""
