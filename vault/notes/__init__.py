"""One note: parsing (frontmatter, markdown scan), link resolution and rewriting, records."""
