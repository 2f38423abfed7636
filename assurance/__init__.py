"""Age assurance, offline: evaluation on labelled faces, the calibration that writes the policy the service applies
(sessions_api/age_policy.json), the PAD and face-match measurements, the published statement, and the studies."""
