// The /docs page's start-up: Swagger UI renders the OpenAPI document this
// server serves. It is a file of its own, not an inline script, because the
// page's Content-Security-Policy allows scripts from this origin only.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    // Relative, so that the page also works behind a proxy that mounts the
    // API under a path prefix.
    url: "openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    // Swagger UI would otherwise send the document to validator.swagger.io
    // for a badge: no request leaves for another origin.
    validatorUrl: null,
    // A key typed into Authorize stays in this tab only, never in storage.
    persistAuthorization: false,
    displayRequestDuration: true,
    presets: [SwaggerUIBundle.presets.apis],
  });
});
