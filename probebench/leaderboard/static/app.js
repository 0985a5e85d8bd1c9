// Sorting of every sortable table and filtering of the ranked group tables; no
// dependencies, works from file://.
(function () {
  function cellValue(row, index) {
    var cell = row.children[index];
    var v = cell.getAttribute("data-value");
    return v === null ? cell.textContent.trim() : v;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headers = table.querySelectorAll("th.sortable");
    headers.forEach(function (th, index) {
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
  var text = document.getElementById("filter-text");
  var selects = document.querySelectorAll("select[data-filter]");
  function applyFilters() {
    var needle = text ? text.value.toLowerCase() : "";
    document.querySelectorAll("table.leaderboard tbody tr").forEach(function (row) {
      var ok = row.textContent.toLowerCase().indexOf(needle) !== -1;
      selects.forEach(function (s) {
        if (s.value && row.getAttribute("data-" + s.getAttribute("data-filter")) !== s.value) ok = false;
      });
      row.style.display = ok ? "" : "none";
    });
  }
  if (text) text.addEventListener("input", applyFilters);
  selects.forEach(function (s) { s.addEventListener("change", applyFilters); });
})();
