"""`{% pipeline_status as pipeline %}` for the operators' admin front page."""

from django import template

from ..selectors import pipeline_status as _pipeline_status

register = template.Library()


@register.simple_tag
def pipeline_status():
    return _pipeline_status()
