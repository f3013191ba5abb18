// The /docs page's start-up: Swagger UI renders the OpenAPI document this
// server serves, which the page carries in the data block #openapi-document
// (the same bytes as /openapi.json). It is a file of its own, not an inline
// script, because the page's Content-Security-Policy allows scripts from
// this origin only; a data block is not a script, and runs nothing.
//
// It runs as it is parsed, at the end of the body, not at the load event:
// with the document at hand there is nothing to fetch, and Swagger UI's
// first render, queued now, comes before the parser's end, so before
// DOMContentLoaded and load. TestDocsChromium checks the operations are
// listed at the load event.
window.ui = SwaggerUIBundle({
  spec: JSON.parse(document.getElementById("openapi-document").textContent),
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
// Where the document is served, relative so that a path prefix in front of
// the API keeps working: the page links to it under the title. This sets
// the address only; nothing is fetched.
window.ui.specActions.updateUrl("openapi.json");
