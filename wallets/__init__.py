"""The digital ID's wallets: requests and answers (this device or a phone), the reader certificate, trusted issuers."""
