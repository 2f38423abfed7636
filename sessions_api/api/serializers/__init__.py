"""The API's shapes, by what they do: request fields (fields.py), request bodies (inputs.py), their fast validation
(validation.py), the answers declared for the OpenAPI document (outputs.py) and built by hand (representations.py)."""
