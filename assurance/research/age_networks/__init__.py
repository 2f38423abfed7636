"""Research tooling: do other age networks share the East Asian adult bias? (README.md)"""
