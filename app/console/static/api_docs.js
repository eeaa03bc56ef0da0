// The API document's page (/docs): Swagger UI, served by this server, reading the
// OpenAPI document named on its mount point. A file of its own, as the pages' policy
// allows no inline script.
const mount = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({
  url: mount.dataset.specUrl,
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
});
