"""fusec.dialects."""
