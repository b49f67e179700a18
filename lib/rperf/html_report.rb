# frozen_string_literal: true

require "json"
require "erb"

module Rperf
  # Views of a loaded profile for `rperf report --top|--html`: a top table, and a static self-contained HTML
  # page (flame graph + top table). The page loads nothing from the network.
  module HtmlReport
    module_function

    def top_table(data, top: 20)
      t = Result.flat_and_cumulative(data)
      total = t[:total_weight]
      lines = [format("Total: %.1fms (%s), %d stacks", total / 1e6, data[:mode], data[:aggregated_samples].size),
               format("%12s %6s %12s %6s  %s", "flat", "flat%", "cum", "cum%", "function")]
      t[:flat].sort_by { |k, w| [-w, k] }.first(top).each do |key, flat|
        cum = t[:cum][key]
        label, path = key
        lines << format("%10.1fms %5.1f%% %10.1fms %5.1f%%  %s%s", flat / 1e6, pct(flat, total), cum / 1e6,
                        pct(cum, total), label, path.empty? ? "" : " (#{path})")
      end
      lines.join("\n")
    end

    def pct(w, total) = total.positive? ? w * 100.0 / total : 0.0

    # Root-first call tree: { "n" => name, "v" => weight, "c" => [children] }.
    def tree(data)
      root = { "n" => "all", "v" => 0, "c" => {} }
      data[:aggregated_samples].each do |frames, weight|
        node = root
        node["v"] += weight
        frames.reverse_each do |f|
          node = (node["c"][f[1]] ||= { "n" => f[1], "v" => 0, "c" => {} })
          node["v"] += weight
        end
      end
      finish = ->(n) { n.merge("c" => n["c"].values.sort_by { |c| -c["v"] }.map(&finish)) }
      finish.(root)
    end

    def html(data, title: "rperf profile")
      tree_json = JSON.generate(tree(data)).gsub("</", "<\\/")
      table = ERB::Util.html_escape(top_table(data, top: 30))
      TEMPLATE.result_with_hash(title: ERB::Util.html_escape(title), tree_json: tree_json, table: table,
                                mode: data[:mode])
    end

    TEMPLATE = ERB.new(<<~'HTML')
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
      <title><%= title %></title>
      <style>
        body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
        #flame { position: relative; width: 100%; overflow: hidden; border: 1px solid #ddd; }
        .f { position: absolute; height: 17px; box-sizing: border-box; border: 1px solid #fff; overflow: hidden;
             white-space: nowrap; font-size: 11px; padding: 0 3px; cursor: pointer; }
        #info { height: 1.4em; margin: 6px 0; font-family: monospace; }
        pre { background: #f6f6f6; padding: 8px; overflow-x: auto; }
      </style>
      </head>
      <body>
      <h1><%= title %> (<%= mode %> mode)</h1>
      <div id="info">Click a frame to zoom, click the top bar to reset.</div>
      <div id="flame"></div>
      <h2>Top functions</h2>
      <pre id="top"><%= table %></pre>
      <script id="tree" type="application/json"><%= tree_json %></script>
      <script>
      (function () {
        var tree = JSON.parse(document.getElementById('tree').textContent);
        var flame = document.getElementById('flame'), info = document.getElementById('info');
        var ROW = 18;
        function depth(n) { var d = 0; n.c.forEach(function (c) { d = Math.max(d, depth(c)); }); return d + 1; }
        function color(name) {
          var h = 0; for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
          return 'hsl(' + (h % 50 + 10) + ',80%,' + (60 + h % 15) + '%)';
        }
        function render(focus) {
          flame.innerHTML = '';
          flame.style.height = (depth(focus) * ROW + 2) + 'px';
          var width = flame.clientWidth || 1000;
          (function draw(n, x, y, w) {
            if (w < 1) return;
            var d = document.createElement('div');
            d.className = 'f';
            d.style.left = x + 'px'; d.style.top = (y * ROW) + 'px'; d.style.width = w + 'px';
            d.style.background = color(n.n);
            d.textContent = n.n;
            d.title = n.n + ' ' + (n.v / 1e6).toFixed(1) + 'ms (' + (100 * n.v / tree.v).toFixed(1) + '%)';
            d.onclick = function () { render(n === focus ? tree : n); };
            d.onmouseover = function () { info.textContent = d.title; };
            flame.appendChild(d);
            var cx = x;
            n.c.forEach(function (c) { var cw = w * c.v / n.v; draw(c, cx, y + 1, cw); cx += cw; });
          })(focus, 0, 0, width);
          flame.setAttribute('data-rendered', flame.childElementCount);
        }
        render(tree);
      })();
      </script>
      </body>
      </html>
    HTML
  end
end
