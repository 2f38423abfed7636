"""Age assurance of the face path: labelled evaluation, the calibrated policy and its published statement."""
