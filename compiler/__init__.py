"""fusec.compiler."""
