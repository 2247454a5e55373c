// Swagger UI initializer. A file of its own (not an inline <script>) so that the page runs under
// our Content-Security-Policy (script-src 'self'), with no 'unsafe-inline'.
'use strict';

window.addEventListener('DOMContentLoaded', function () {
  var root = document.getElementById('swagger-ui');
  // Relative to the page, so the documentation keeps working behind a path prefix.
  var specUrl = new URL(root.getAttribute('data-spec-url'), window.location.href).toString();
  window.ui = window.SwaggerUIBundle({
    url: specUrl,
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // No call to the public validator: the page fetches nothing outside this service.
    validatorUrl: null,
    // Tokens stay in memory only; a reload forgets them.
    persistAuthorization: false,
    displayOperationId: true,
    defaultModelsExpandDepth: 0,
  });
});
