/*
 * Typeahead selects of the generated forms (issue 25), over tom-select (served from npm by
 * src/ui/routes/assets.ts). Every control with `data-lookup` (built by src/ui/typeahead.ts) asks
 * `/ui-api/lookup/?model=…&q=…&<filters>` with the session; a filter takes the value of another control
 * of the form (a cable's B port: the chosen device), so a change there clears the dependent choice.
 * A text box (too many objects for a select, or a generic FK's id) becomes a select of its current value.
 * Without JavaScript (or tom-select) the plain controls stay and still work.
 */
(() => {
  const form = document.querySelector("form.edit");
  if (!form || typeof window.TomSelect !== "function") return;
  const controlValue = (name) => {
    const el = form.elements.namedItem(name);
    return el && "value" in el ? String(el.value || "") : "";
  };
  /** Controls by the names of the controls their filters read. */
  const dependents = new Map();
  for (const el of form.querySelectorAll("[data-lookup]")) {
    const spec = JSON.parse(el.dataset.lookup);
    let select = el;
    if (el.tagName === "INPUT") {
      select = document.createElement("select");
      select.id = el.id;
      select.name = el.name;
      select.multiple = !!spec.multiple;
      select.add(new Option("", "", false, false));
      for (const c of JSON.parse(el.dataset.current || "[]"))
        select.add(new Option(c.label, c.value, true, true));
      el.replaceWith(select);
    }
    const label = form.querySelector(`label[for="${CSS.escape(select.id)}"]`);
    const ts = new window.TomSelect(select, {
      valueField: "value",
      labelField: "text",
      searchField: [],
      maxItems: select.multiple ? null : 1,
      allowEmptyOption: !select.multiple,
      preload: "focus",
      closeAfterSelect: true,
      loadThrottle: 150,
      shouldLoad: () => true,
      score: () => () => 1,
      plugins: select.multiple ? ["remove_button"] : [],
      load(query, callback) {
        const src = spec.sources[spec.typeField ? controlValue(spec.typeField) : ""];
        if (!src) return callback();
        const params = new URLSearchParams({ model: src.model });
        if (query) params.set("q", query);
        for (const [param, from] of Object.entries(src.scope)) {
          const v = from.startsWith("=") ? from.slice(1) : controlValue(from);
          if (v) params.set(param, v);
        }
        fetch(`/ui-api/lookup/?${params}`, {
          credentials: "same-origin",
          headers: { accept: "application/json" },
        })
          .then((r) => (r.ok ? r.json() : { results: [] }))
          .then((j) => {
            // Only this answer is listed (the server matched `q`, perhaps on other fields than the label).
            this.clearOptions();
            callback(j.results.map((o) => ({ value: o.id, text: o.display })));
          })
          .catch(() => callback());
      },
    });
    // tom-select points the label at its own box: the original (hidden) select keeps its name too.
    if (label) {
      if (!label.id) label.id = `${select.id}-label`;
      select.setAttribute("aria-labelledby", label.id);
    }
    // The server's (filtered) answers replace the select's own list; the chosen option stays. The
    // original <select> keeps all its options, so the posted value and plain form use are unchanged.
    ts.clearOptions();
    const reads = new Set(Object.values(spec.sources).flatMap((s) => Object.values(s.scope)));
    if (spec.typeField) reads.add(spec.typeField);
    for (const name of reads) {
      if (name.startsWith("=")) continue;
      dependents.set(name, [...(dependents.get(name) || []), ts]);
    }
  }
  // A changed device (or type) clears the choices that were filtered by it.
  form.addEventListener("change", (e) => {
    const name = e.target?.name;
    for (const ts of dependents.get(name) || []) {
      ts.clear();
      ts.clearOptions();
      ts.wrapper.classList.remove("preloaded");
    }
  });
})();
