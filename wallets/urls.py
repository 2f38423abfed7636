"""Routes a phone's wallet calls under /wallet/openid4vp/ (cross-device OpenID4VP): no namespace, the names are
the ones the request object's links are built from."""

from django.urls import path

from . import views

urlpatterns = [
    path("request/<str:request_id>", views.request_object, name="wallet-request"),
    path("response/<str:request_id>", views.response, name="wallet-response"),
]
