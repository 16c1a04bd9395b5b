-- fake-api.lua: wrk script for bench/fake-api.sh: POSTs one valid
-- template send with the bearer token of WA_TOKEN.
wrk.method = "POST"
wrk.path = "/v21.0/106540352242922/messages"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("WA_TOKEN")
wrk.body = '{"messaging_product":"whatsapp","recipient_type":"individual",' ..
    '"to":"+15551234567","type":"template","template":{"name":"reminder",' ..
    '"language":{"code":"en_US"},"components":[{"type":"body",' ..
    '"parameters":[{"type":"text","text":"Ana"}]}]},' ..
    '"biz_opaque_callback_data":"42:123"}'
