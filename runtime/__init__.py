"""fusec.runtime."""
