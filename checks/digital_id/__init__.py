"""Digital ID: ISO 18013-5 mdoc age proofs presented through the Digital Credentials API, verified offline.

`verifier.presentation_verify` is the one entry point; everything it decodes is capped and every
refusal carries one code per step (`refusals.Refusal`). Nothing here keeps the presentation.
"""
