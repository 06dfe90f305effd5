"""fusec.tools."""
