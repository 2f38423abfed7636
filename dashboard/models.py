"""The dashboard keeps no rows of its own: the audit log it shows is tenants.AuditLogEntry (moved there in issue 46)."""
