"""Head yaw from dlib's five face landmarks, as a parallax measure rather than an angle.

The five points are the outer and inner corner of each eye (points 0-1: the eye on the image's
right, 2-3: the eye on the image's left) and the base of the nose (point 4). The nose sits in
front of the eyes, so when a head turns it moves sideways relative to the eye corners; we measure
that offset along the eye line, in units of the eye-corner width:

    yaw = ((nose - mean(eye corners)) . eye_axis) / |outer corner - outer corner|

About 0 for a frontal face; about 0.3 * tan(turn angle) for a real head (0.12 at ~20 degrees);
positive when the nose moves towards the image's right edge. A flat photo tilted in front of the
camera has no such parallax: its yaw stays near 0 until the tilt is extreme (about 0.1 at 50
degrees), which is what lets the liveness check tell a turning head from a tilted print.
"""

from __future__ import annotations

import numpy as np


def head_yaw(landmarks: np.ndarray) -> float:
    """Signed yaw measure of a face from its (5, 2) landmarks; positive: nose towards image right."""
    points = np.asarray(landmarks, dtype=np.float64)
    if points.shape != (5, 2):
        raise ValueError("head_yaw needs dlib's 5 landmarks as a (5, 2) array")
    right_eye = points[0:2].mean(axis=0)
    left_eye = points[2:4].mean(axis=0)
    axis = right_eye - left_eye
    width = float(np.linalg.norm(points[0] - points[2]))
    if width < 1e-6 or float(np.linalg.norm(axis)) < 1e-6:
        return 0.0
    axis /= np.linalg.norm(axis)
    eye_middle = points[0:4].mean(axis=0)
    return float(np.dot(points[4] - eye_middle, axis) / width)


def face_width_ratio(landmarks: np.ndarray) -> float:
    """Eye-corner width over the eyes-to-nose height: shrinks as cos(turn) when a face turns.

    The height (distance from the eye line down to the nose) barely changes with a turn about the
    vertical axis, so the ratio measures foreshortening whatever the distance to the camera.
    """
    points = np.asarray(landmarks, dtype=np.float64)
    right_eye = points[0:2].mean(axis=0)
    left_eye = points[2:4].mean(axis=0)
    axis = right_eye - left_eye
    norm = float(np.linalg.norm(axis))
    if norm < 1e-6:
        return 0.0
    axis /= norm
    offset = points[4] - points[0:4].mean(axis=0)
    height = abs(float(offset[0] * axis[1] - offset[1] * axis[0]))
    width = float(np.linalg.norm(points[0] - points[2]))
    return width / height if height > 1e-6 else 0.0
