// Swagger UI on this service's own OpenAPI document. It is a file, not an inline script, so that
// the page's Content-Security-Policy can refuse every inline script.
window.ui = window.SwaggerUIBundle({
  // Relative to the page (/docs): right behind a proxy that adds a path prefix.
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayRequestDuration: true,
  // Otherwise Swagger UI sends the document to validator.swagger.io and shows its badge.
  validatorUrl: null,
  // BaseLayout without the standalone preset: no top bar that loads other URLs into this page.
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
