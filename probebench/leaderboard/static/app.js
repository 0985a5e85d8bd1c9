// Sorting of every sortable table, filtering of the tables of entries, the axis-column
// toggle, the pinned columns of ranked tables, column definitions on tap (an entry
// page's from definitions.js, loaded before this script), the copy
// buttons and the BibTeX's address; no dependencies, works from file://, no inline
// handlers (nothing a Content-Security-Policy of script-src 'self' would refuse).
(function () {
  // A ranked table's rank, entry and ProbeScore stay in view when it scrolls sideways:
  // the CSS makes them sticky; here each gets the offset where its column starts.
  function pin(table) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head || head.cells.length < 4) return;
    table.classList.remove("pinned");  // measured where the columns are, unstuck
    var first = head.cells[0].getBoundingClientRect().left;
    table.style.setProperty("--pin-2", (head.cells[1].getBoundingClientRect().left - first) + "px");
    table.style.setProperty("--pin-3", (head.cells[2].getBoundingClientRect().left - first) + "px");
    table.classList.add("pinned");
  }
  function pinAll() { document.querySelectorAll("table.ranked").forEach(pin); }
  pinAll();
  window.addEventListener("resize", pinAll);

  function cellValue(row, index) {
    var cell = row.children[index];
    var v = cell.getAttribute("data-value");
    return v === null ? cell.textContent.trim() : v;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.querySelectorAll("th.sortable");
    headers.forEach(function (th) {
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-type") === "number";
        var asc = !th.classList.contains("asc");
        headers.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var col = Array.prototype.indexOf.call(th.parentNode.children, th);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, col), y = cellValue(b, col);
          if (numeric) { x = parseFloat(x); y = parseFloat(y);
            if (isNaN(x)) x = -Infinity; if (isNaN(y)) y = -Infinity; }
          var c = x < y ? -1 : x > y ? 1 : 0;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // Filters: free text, task or family, model, status, category. A group whose rows are
  // all hidden is hidden with its heading; a family section with no group left too.
  var text = document.getElementById("filter-text");
  var selects = document.querySelectorAll("select[data-filter]");
  var rowSelector = "table.leaderboard tbody tr, table.filterable tbody tr";
  function matches(row, key, value) {
    if (!value) return true;
    if (key === "scope") {
      var sep = value.indexOf(":");
      var kind = value.slice(0, sep), name = value.slice(sep + 1);
      if (kind === "family") return row.getAttribute("data-family") === name;
      return (row.getAttribute("data-tasks") || "").split(" ").indexOf(name) !== -1;
    }
    return row.getAttribute("data-" + key) === value;
  }
  function applyFilters() {
    var needle = text ? text.value.toLowerCase() : "";
    var shown = 0;
    document.querySelectorAll(rowSelector).forEach(function (row) {
      var ok = row.textContent.toLowerCase().indexOf(needle) !== -1;
      selects.forEach(function (s) {
        if (!matches(row, s.getAttribute("data-filter"), s.value)) ok = false;
      });
      row.style.display = ok ? "" : "none";
      if (ok) shown += 1;
    });
    document.querySelectorAll(".group").forEach(function (group) {
      var rows = group.querySelectorAll("tbody tr");
      if (!rows.length) return;
      var any = Array.prototype.some.call(rows, function (r) { return r.style.display !== "none"; });
      group.style.display = any ? "" : "none";
    });
    document.querySelectorAll("section.family").forEach(function (section) {
      var groups = section.querySelectorAll(".group");
      if (!groups.length) return;
      var any = Array.prototype.some.call(groups, function (g) {
        return g.style.display !== "none" && g.querySelector("tbody tr");
      });
      section.style.display = any ? "" : "none";
    });
    var empty = document.getElementById("filter-empty");
    if (empty) empty.hidden = shown !== 0;
    pinAll();
  }
  if (text) text.addEventListener("input", applyFilters);
  selects.forEach(function (s) { s.addEventListener("change", applyFilters); });

  var axes = document.getElementById("show-axes");
  if (axes) {
    axes.addEventListener("change", function () {
      document.body.classList.toggle("show-axes", axes.checked);
      pinAll();
    });
    document.body.classList.toggle("show-axes", axes.checked);
    pinAll();
  }

  // An entry page names a metric's definition (data-def="auroc") instead of repeating it
  // in every tooltip: the text is the site's, static/definitions.js, given once. Each
  // such name gets its title and its ? button here; an empty data-def keeps its own title.
  var defs = window.PROBEBENCH_DEFINITIONS || {};
  document.querySelectorAll("[data-def]").forEach(function (holder) {
    var key = holder.getAttribute("data-def");
    if (key && Object.prototype.hasOwnProperty.call(defs, key)) {
      holder.setAttribute("title", defs[key]);
    }
    if (!holder.getAttribute("title")) return;
    var name = holder.querySelector(".help");
    if (!name) {
      name = document.createElement("span");
      name.className = "help";
      while (holder.firstChild) name.appendChild(holder.firstChild);
      holder.appendChild(name);
    }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "defn";
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-label", "what " + name.textContent.trim() + " means");
    name.parentNode.insertBefore(button, name.nextSibling);
  });

  // Column definitions without hovering: the ? beside a column's name shows its
  // definition (the title of the header it is in) in one popover; the same button, a
  // tap elsewhere or Escape closes it. The button does not sort the column.
  var pop = null, opened = null;
  function closeDefinition(refocus) {
    if (!opened) return;
    opened.setAttribute("aria-expanded", "false");
    if (refocus) opened.focus();
    opened = null;
    pop.hidden = true;
  }
  function openDefinition(button) {
    closeDefinition(false);
    var holder = button.closest("[title]");
    if (!holder) return;
    if (!pop) {
      pop = document.createElement("div");
      pop.id = "definition-pop";
      pop.className = "definition-pop";
      pop.setAttribute("role", "note");
      pop.setAttribute("aria-live", "polite");
      document.body.appendChild(pop);
    }
    pop.textContent = holder.getAttribute("title");
    pop.style.left = "0px";
    pop.hidden = false;
    var at = button.getBoundingClientRect();
    var room = document.documentElement.clientWidth;
    var left = Math.max(8, Math.min(at.left, room - pop.offsetWidth - 8));
    pop.style.left = (left + window.scrollX) + "px";
    pop.style.top = (at.bottom + window.scrollY + 6) + "px";
    button.setAttribute("aria-expanded", "true");
    button.setAttribute("aria-controls", pop.id);
    opened = button;
  }
  document.querySelectorAll("button.defn").forEach(function (button) {
    button.addEventListener("click", function (event) {
      event.stopPropagation();  // a tap on the ? is not a tap on the header (no sorting)
      if (opened === button) closeDefinition(false); else openDefinition(button);
    });
  });
  document.addEventListener("click", function (event) {
    if (opened && !pop.contains(event.target)) closeDefinition(false);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") closeDefinition(true);
  });
  window.addEventListener("resize", function () { closeDefinition(false); });
  document.querySelectorAll(".table-wrap").forEach(function (wrap) {
    wrap.addEventListener("scroll", function () { closeDefinition(false); });
  });

  // The BibTeX of an entry page served over http(s) cites the page's own address.
  var bibtex = document.getElementById("bibtex");
  if (bibtex && /^https?:$/.test(window.location.protocol)) {
    var here = window.location.origin + window.location.pathname;
    bibtex.textContent = bibtex.textContent.replace(
      /^(\s*url\s*=\s*\{)[^}\n]*(\})/m, function (_, open, close) {
        return open + here + close;
      });
  }

  // Copy buttons: the clipboard when the page may use it, else the text is selected.
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-copy"));
      if (!target) return;
      var range = document.createRange();
      range.selectNodeContents(target);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      function done() { button.textContent = "Copied"; }
      function selected() { button.textContent = "Selected: press Ctrl+C"; }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(target.textContent).then(done, selected);
      } else {
        selected();
      }
    });
  });

  // The index's entry list: every listed entry (entries.js, a script so that it loads
  // from file://), filtered by text and status, a page of PAGE_ROWS rows at a time.
  // Cells are set as text, never as HTML.
  var data = window.PROBEBENCH_ENTRIES, list = document.getElementById("entry-list");
  if (data && list) {
    var PAGE_ROWS = data.page_rows || 50, page = 0, found = [];
    // the rows hold data.fields; a column equal on every row is data.same's, given once,
    // and a row without an href links its entry's page, named from the id
    var col = {}, same = data.same || {}, codes = data.codes || {};
    var rows = data.rows.map(function (r) {
      var full = {};
      Object.keys(same).forEach(function (f) { full[f] = same[f]; });
      data.fields.forEach(function (f, i) { full[f] = codes[f] ? codes[f][r[i]] : r[i]; });
      if (full.href === undefined) {
        full.href = "entries/" + full.id.split("/").join("__") + ".html";
      }
      return full;
    });
    // (each row is now an object by field name)
    ["id", "short_name", "href", "family", "tasks", "model", "status", "category",
     "probescore", "auroc", "rank", "beats"].forEach(function (f) { col[f] = f; });
    var search = document.getElementById("entry-search");
    var status = document.getElementById("entry-status");
    var label = document.getElementById("entry-page");
    var prev = document.getElementById("entry-prev"), next = document.getElementById("entry-next");
    var haystack = rows.map(function (r) {
      return [r[col.id], r[col.short_name], r[col.model], r[col.tasks], r[col.family],
              r[col.category]].join(" ").toLowerCase();
    });
    function cell(tr, text, css) {
      var td = document.createElement("td");
      if (css) td.className = css;
      td.textContent = text;
      tr.appendChild(td);
      return td;
    }
    function render() {
      var pages = Math.max(1, Math.ceil(found.length / PAGE_ROWS));
      page = Math.min(Math.max(page, 0), pages - 1);
      var body = list.tBodies[0];
      while (body.firstChild) body.removeChild(body.firstChild);
      found.slice(page * PAGE_ROWS, (page + 1) * PAGE_ROWS).forEach(function (k) {
        var r = rows[k], tr = document.createElement("tr");
        tr.setAttribute("data-entry", r[col.id]);
        cell(tr, r[col.rank] || "—");
        var name = cell(tr, ""), a = document.createElement("a");
        a.setAttribute("href", (list.getAttribute("data-root") || "") + r[col.href]);
        a.textContent = r[col.short_name];
        name.appendChild(a);
        cell(tr, r[col.family]); cell(tr, r[col.tasks]); cell(tr, r[col.model]);
        cell(tr, r[col.status]);
        cell(tr, r[col.probescore] == null ? "—" : r[col.probescore].toFixed(3), "num");
        cell(tr, r[col.auroc].toFixed(3), "num");
        cell(tr, r[col.beats]);
        body.appendChild(tr);
      });
      label.textContent = found.length ? "page " + (page + 1) + " of " + pages + " (" +
        found.length + " entries)" : "no entry matches";
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
    }
    function refilter() {
      var needle = search.value.toLowerCase(), want = status.value;
      found = [];
      rows.forEach(function (r, k) {
        if (haystack[k].indexOf(needle) !== -1 && (!want || r[col.status] === want)) found.push(k);
      });
      page = 0;
      render();
    }
    search.addEventListener("input", refilter);
    status.addEventListener("change", refilter);
    prev.addEventListener("click", function () { page -= 1; render(); });
    next.addEventListener("click", function () { page += 1; render(); });
    document.querySelector(".entry-list-controls").hidden = false;
    list.hidden = false;
    refilter();
  }
  // An entry page's rank, from its rank script (ranks/<xx>.js): the static page holds
  // nothing that other entries' results move, so an unchanged page is reused as it is.
  // The text replaces the "see its ranking" link; set as text, never as HTML.
  var ranks = window.PROBEBENCH_RANKS;
  if (ranks) {
    Array.prototype.forEach.call(document.querySelectorAll(".entry-rank[data-entry]"),
      function (span) {
        var own = ranks[span.getAttribute("data-entry")];
        if (!own) return;
        var task = span.getAttribute("data-task");
        var r = task ? (own.tasks || {})[task] : own.set;
        if (!r) return;
        span.textContent = r[0] + " [" + r[1] + ", " + r[2] + "] of " + r[3];
        span.classList.add("filled");
      });
  }
})();
