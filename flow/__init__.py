"""The hosted verification flow: the pages an end user goes through, under /flow/ (CONTRACT 4)."""
