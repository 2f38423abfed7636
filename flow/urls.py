"""Routes of the hosted verification flow under /flow/."""

from django.urls import path, re_path

from . import age_pass, brand, digital_id, embedding, errors, language, views

app_name = "flow"
urlpatterns = [
    path("start", views.start, name="start"),
    path("embed", embedding.embed_frame, name="embed"),
    path("embed/begin", embedding.embed_begin, name="embed_begin"),
    path("embed/launch", embedding.embed_launch, name="embed_launch"),
    path("launch", embedding.launch, name="launch"),
    path("", views.consent, name="consent"),
    path("selfie", views.selfie, name="selfie"),
    path("no-camera", views.document_instead, name="document_instead"),
    path("progress", views.progress, name="progress"),
    path("status", views.status, name="status"),
    path("document", views.document, name="document"),
    path("sandbox", views.sandbox, name="sandbox"),
    path("result", views.result, name="result"),
    path("cancel", views.cancel, name="cancel"),
    path("language", language.set_language, name="language"),
    path("digital-id/request", digital_id.request_create, name="digital_id_request"),
    path("digital-id/response", digital_id.response_submit, name="digital_id_response"),
    path("digital-id/test-wallet", digital_id.test_wallet, name="digital_id_test_wallet"),
    path("digital-id/phone", digital_id.phone_request, name="digital_id_phone"),
    path("digital-id/phone/progress", digital_id.phone_progress, name="digital_id_phone_progress"),
    path("age-pass/", age_pass.manage_page, name="age_pass_manage_page"),
    path("age-pass/save/options", age_pass.save_options, name="age_pass_save_options"),
    path("age-pass/save", age_pass.save, name="age_pass_save"),
    path("age-pass/use/options", age_pass.use_options, name="age_pass_use_options"),
    path("age-pass/use", age_pass.use, name="age_pass_use"),
    path("age-pass/manage/options", age_pass.manage_options, name="age_pass_manage_options"),
    path("age-pass/manage", age_pass.manage, name="age_pass_manage"),
    path("brand/<str:tenant_id>/logo.png", brand.logo, name="logo"),
    path("brand/<str:tenant_id>/theme.css", brand.theme, name="theme"),
    # Anything else under /flow/ gets the flow's own friendly 404 page.
    re_path(r"^(?P<rest>.*)$", errors.not_found),
]
