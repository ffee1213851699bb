// Starts GraphiQL on the web interface's /graphql/ page (issue 25): queries go to the page's endpoint with
// the session cookie and the page's CSRF token; no inline script, so the CSP allows only this origin's files.
(() => {
  const el = document.getElementById("graphiql");
  if (!el || !window.GraphiQL || !window.React || !window.ReactDOM) return;
  const endpoint = el.dataset.endpoint;
  const csrf = el.dataset.csrf;
  const fetcher = async (params) => {
    const res = await fetch(endpoint, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(params),
    });
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return { errors: [{ message: `HTTP ${res.status}: ${text.slice(0, 200)}` }] };
    }
  };
  const theme = document.documentElement.dataset.theme;
  el.textContent = "";
  window.ReactDOM.createRoot(el).render(
    window.React.createElement(window.GraphiQL, {
      fetcher,
      defaultQuery: el.dataset.query,
      defaultEditorToolsVisibility: true,
      ...(theme === "dark" || theme === "light" ? { forcedTheme: theme } : {}),
    }),
  );
})();
