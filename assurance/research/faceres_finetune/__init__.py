"""Research: does fine-tuning HSE FaceRes on calibration faces remove its East Asian adult bias?

Nothing here is imported by the service. See README.md beside this file.
"""
