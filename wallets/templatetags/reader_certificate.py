"""`{% reader_certificate_status as reader %}` for the operators' admin front page."""

from django import template

from ..reader_certificate import reader_certificate_status as _reader_certificate_status

register = template.Library()


@register.simple_tag
def reader_certificate_status():
    return _reader_certificate_status()
