/* tollfree chat widget (issue 14 item 8).
 *
 * A site adds:
 *   <script src="https://gateway.example.com/widget.js" data-chain="site" defer></script>
 * and gets a chat box that asks POST <this script's origin>/v1/ask with
 * stream: true. Optional attributes: data-title (the panel's heading),
 * data-label (the launcher's text), data-lang (the answers' language,
 * sent as Accept-Language), data-visitor-header (the gateway's
 * visitor_ids.header, default X-Tollfree-Visitor).
 *
 * No framework, no build step, no request anywhere but the gateway. The
 * conversation lives in this page only, and the last two exchanges go
 * with a follow-up. The one thing kept in the browser is the visitor id
 * the gateway signs (when its visitor_ids are on): read from the answer's
 * visitor header, kept in localStorage under this gateway's origin, and
 * sent back in that header with every question, so that the gateway
 * counts this visitor apart from others behind the same address (issue
 * 32: with credentials "omit" and no header, it never came back). Model
 * output is only ever set as text; links are built as elements, http(s)
 * only.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  var origin = new URL(script.src, location.href).origin;
  var chain = script.getAttribute("data-chain") || "";
  var titleText = script.getAttribute("data-title") || "Ask this site";
  var launcherText = script.getAttribute("data-label") || "Ask a question";
  var lang = script.getAttribute("data-lang") || "";
  var visitorHeader = script.getAttribute("data-visitor-header") || "X-Tollfree-Visitor";
  var visitorKey = "tollfree_visitor " + origin;
  var visitor = "";
  try { visitor = window.localStorage.getItem(visitorKey) || ""; } catch (e) { /* storage off: this page only */ }
  var HISTORY = 2; // exchanges sent with a follow-up (the assistant keeps the last two)
  var MAX_QUESTION = 2000;

  var CSS = [
    ":host{all:initial}",
    "*,*::before,*::after{box-sizing:border-box}",
    ".tf{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1f24}",
    ".launcher{position:fixed;right:16px;bottom:16px;z-index:2147483000;border:0;border-radius:999px;",
    "padding:12px 18px;background:#1a56db;color:#fff;font:inherit;font-weight:600;cursor:pointer;",
    "box-shadow:0 4px 14px rgba(0,0,0,.25);max-width:calc(100vw - 32px)}",
    ".launcher:hover{background:#1645b5}",
    "button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}",
    ".panel{position:fixed;right:16px;bottom:76px;z-index:2147483001;width:380px;max-width:calc(100vw - 32px);",
    "height:520px;max-height:calc(100vh - 96px);display:flex;flex-direction:column;background:#fff;",
    "border:1px solid #d0d7de;border-radius:12px;box-shadow:0 10px 30px rgba(0,0,0,.25);overflow:hidden}",
    ".panel[hidden]{display:none}",
    ".head{display:flex;align-items:center;justify-content:space-between;gap:8px;padding:10px 12px;",
    "background:#1a56db;color:#fff}",
    ".head h2{margin:0;font:inherit;font-size:16px;font-weight:600;overflow-wrap:anywhere}",
    ".close{border:0;background:transparent;color:#fff;font:inherit;font-size:22px;line-height:1;",
    "padding:4px 8px;cursor:pointer;border-radius:6px}",
    ".log{flex:1;overflow-y:auto;overflow-x:hidden;padding:12px;display:flex;flex-direction:column;gap:10px}",
    ".msg{max-width:100%;padding:8px 10px;border-radius:10px;white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word}",
    ".user{align-self:flex-end;background:#e8f0fe;max-width:85%}",
    ".bot{align-self:flex-start;background:#f3f4f6}",
    ".bot[data-mode=search]{background:#fff8e6;border:1px solid #f3d48b}",
    ".bot[data-mode=error],.bot[data-mode=limit]{background:#fdecec;border:1px solid #f5b5b5}",
    ".note{display:block;margin-top:6px;font-size:13px;color:#6b2121}",
    ".sources{margin:6px 0 0;padding-left:18px;white-space:normal}",
    ".sources li{margin:2px 0}",
    "a{color:#1a56db;text-decoration:underline;overflow-wrap:anywhere}",
    ".hint{margin:0;color:#57606a;font-size:14px}",
    "form{display:flex;flex-wrap:wrap;gap:6px;padding:10px 12px;border-top:1px solid #d0d7de}",
    "label{flex-basis:100%;font-size:13px;color:#57606a}",
    "input{flex:1;min-width:0;font:inherit;font-size:16px;padding:8px 10px;border:1px solid #8c959f;border-radius:8px;color:#1b1f24;background:#fff}",
    ".send{border:0;border-radius:8px;padding:8px 14px;background:#1a56db;color:#fff;font:inherit;font-size:16px;font-weight:600;cursor:pointer}",
    ".send[disabled]{background:#8c959f;cursor:default}",
    "@media (max-width:480px){.panel{left:0;right:0;bottom:0;width:100%;max-width:100%;",
    "height:85vh;max-height:85vh;border-radius:12px 12px 0 0}",
    ".launcher{right:12px;bottom:12px}}"
  ].join("");

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }

  // safeURL returns an absolute http(s) URL, or "" for anything else
  // (javascript:, data:, relative nonsense).
  function safeURL(u) {
    try {
      var p = new URL(String(u), location.href);
      return p.protocol === "http:" || p.protocol === "https:" ? p.href : "";
    } catch (e) {
      return "";
    }
  }

  function link(href, text) {
    var a = el("a", { href: href, rel: "noopener noreferrer nofollow", target: "_blank" }, text);
    return a;
  }

  // renderText fills node with text, turning Markdown links [t](url) and
  // bare http(s) URLs into link elements; everything else stays text.
  var LINKS = /\[([^\]\n]{1,300})\]\((https?:\/\/[^\s()]+)\)|(https?:\/\/[^\s<>()\[\]]+[^\s<>()\[\].,;:!?'"])/g;
  function renderText(node, text) {
    while (node.firstChild) node.removeChild(node.firstChild);
    var last = 0, m;
    LINKS.lastIndex = 0;
    while ((m = LINKS.exec(text)) !== null) {
      var href = safeURL(m[2] || m[3]);
      if (!href) continue;
      if (m.index > last) node.appendChild(document.createTextNode(text.slice(last, m.index)));
      node.appendChild(link(href, m[1] || m[3]));
      last = LINKS.lastIndex;
    }
    if (last < text.length) node.appendChild(document.createTextNode(text.slice(last)));
  }

  // renderSources lists the answer's sources under it, each once: a source
  // the answer's text already links to is not listed again.
  function renderSources(bubble, sources, text) {
    var list = el("ul", { "class": "sources", "aria-label": "Sources" });
    var seen = {};
    Array.prototype.forEach.call(text.querySelectorAll("a[href]"), function (a) { seen[a.href] = true; });
    (sources || []).forEach(function (s) {
      var href = s && safeURL(s.url);
      if (!href || seen[href]) return;
      seen[href] = true;
      var li = el("li");
      li.appendChild(link(href, (s.title && String(s.title)) || href));
      list.appendChild(li);
    });
    if (list.childNodes.length) bubble.appendChild(list);
  }

  // keepVisitor keeps the visitor id an answer carries, if any.
  function keepVisitor(resp) {
    var id = resp.headers.get(visitorHeader);
    if (!id || id === visitor || !/^[A-Za-z0-9._~-]{1,200}$/.test(id)) return;
    visitor = id;
    try { window.localStorage.setItem(visitorKey, id); } catch (e) { /* storage off: this page only */ }
  }

  // limitText says which limit refused, in its own window (issue 32: an
  // hour's limit said "today"), from the gateway's X-Tollfree-Limit
  // ("caller hour", "site day"...).
  function limitText(limit, wait) {
    var parts = String(limit || "").split(" ");
    var scope = parts[0], kind = parts[1];
    var later = "please try again later" + waitText(wait) + ".";
    if (scope === "site") return "This site's assistant has answered all the questions it can for now; " + later;
    switch (kind) {
      case "hour": return "You have asked a lot in the last hour; " + later;
      case "day": return "You have asked a lot in the last 24 hours; " + later;
      case "tokens": return "You have asked for a lot of text in the last 24 hours; " + later;
      case "concurrent": return "Your other questions are still being answered; please wait for them and try again.";
      case "burst": return "You are asking very fast; " + later;
    }
    return "You have asked a lot; " + later;
  }

  function waitText(seconds) {
    if (!(seconds > 0)) return "";
    if (seconds < 90) return " (in about " + Math.ceil(seconds) + " seconds)";
    if (seconds < 5400) return " (in about " + Math.round(seconds / 60) + " minutes)";
    return " (in about " + Math.round(seconds / 3600) + " hours)";
  }

  // retryAfter reads a Retry-After header: seconds, or an HTTP date.
  function retryAfter(h) {
    if (!h) return 0;
    var n = Number(h);
    if (!isNaN(n)) return n;
    var t = Date.parse(h);
    return isNaN(t) ? 0 : (t - Date.now()) / 1000;
  }

  // readSSE calls on(event, data) for each event of a text/event-stream
  // body; comment lines (": keep-alive") are skipped.
  function readSSE(body, on) {
    var reader = body.getReader();
    var dec = new TextDecoder();
    var buf = "", event = "", data = [];
    function line(l) {
      if (l === "") {
        if (data.length) on(event || "message", data.join("\n"));
        event = "";
        data = [];
        return;
      }
      if (l.charAt(0) === ":") return;
      var i = l.indexOf(":");
      var field = i < 0 ? l : l.slice(0, i);
      var value = i < 0 ? "" : l.slice(i + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    function pump() {
      return reader.read().then(function (r) {
        buf += dec.decode(r.value || new Uint8Array(), { stream: !r.done });
        var lines = buf.split(/\r\n|\r|\n/);
        buf = r.done ? "" : lines.pop();
        lines.forEach(line);
        if (r.done) {
          line("");
          return;
        }
        return pump();
      });
    }
    return pump();
  }

  function Widget() {
    this.history = []; // completed exchanges: {q, a}, in this page only
    this.busy = false;
    var host = el("div", { "data-tollfree-widget": "" });
    var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;
    var style = el("style");
    style.textContent = CSS;
    root.appendChild(style);
    var wrap = el("div", { "class": "tf" });
    this.launcher = el("button", { type: "button", "class": "launcher", "aria-expanded": "false", "aria-controls": "tf-panel" }, launcherText);
    this.panel = el("div", { id: "tf-panel", "class": "panel", role: "dialog", "aria-modal": "false", "aria-labelledby": "tf-title" });
    this.panel.hidden = true;
    var head = el("div", { "class": "head" });
    head.appendChild(el("h2", { id: "tf-title" }, titleText));
    this.closer = el("button", { type: "button", "class": "close", "aria-label": "Close the chat" }, "\u00d7");
    head.appendChild(this.closer);
    this.log = el("div", { "class": "log", role: "log", "aria-live": "polite", "aria-label": "Conversation", tabindex: "0" });
    this.log.appendChild(el("p", { "class": "hint" }, "Ask about this site. Answers come from its pages, with links."));
    this.form = el("form", { "class": "ask" });
    this.form.appendChild(el("label", { "for": "tf-input" }, "Your question"));
    this.input = el("input", { id: "tf-input", type: "text", name: "question", autocomplete: "off", maxlength: String(MAX_QUESTION), enterkeyhint: "send" });
    this.send = el("button", { type: "submit", "class": "send" }, "Send");
    this.form.appendChild(this.input);
    this.form.appendChild(this.send);
    this.panel.appendChild(head);
    this.panel.appendChild(this.log);
    this.panel.appendChild(this.form);
    wrap.appendChild(this.launcher);
    wrap.appendChild(this.panel);
    root.appendChild(wrap);
    document.body.appendChild(host);

    var self = this;
    this.launcher.addEventListener("click", function () { self.toggle(); });
    this.closer.addEventListener("click", function () { self.close(); });
    this.panel.addEventListener("keydown", function (e) {
      if (e.key === "Escape") {
        e.preventDefault();
        self.close();
      }
    });
    this.form.addEventListener("submit", function (e) {
      e.preventDefault();
      self.submit();
    });
  }

  Widget.prototype.toggle = function () {
    if (this.panel.hidden) this.open();
    else this.close();
  };
  Widget.prototype.open = function () {
    this.panel.hidden = false;
    this.launcher.setAttribute("aria-expanded", "true");
    this.input.focus();
  };
  Widget.prototype.close = function () {
    this.panel.hidden = true;
    this.launcher.setAttribute("aria-expanded", "false");
    this.launcher.focus();
  };

  Widget.prototype.bubble = function (cls, text) {
    var b = el("div", { "class": "msg " + cls });
    if (text != null) b.textContent = text;
    this.log.appendChild(b);
    this.log.scrollTop = this.log.scrollHeight;
    return b;
  };

  Widget.prototype.setBusy = function (busy) {
    this.busy = busy;
    this.send.disabled = busy;
    this.log.setAttribute("aria-busy", busy ? "true" : "false");
  };

  Widget.prototype.submit = function () {
    var q = this.input.value.trim();
    if (!q || this.busy) return;
    if (q.length > MAX_QUESTION) q = q.slice(0, MAX_QUESTION);
    this.input.value = "";
    this.bubble("user", q);
    var answer = this.bubble("bot");
    answer.setAttribute("data-state", "waiting");
    var text = el("span", { "class": "text" }, "\u2026");
    answer.appendChild(text);
    this.setBusy(true);
    var self = this;
    this.ask(q, answer, text).then(function () {
      self.setBusy(false);
      self.input.focus();
    });
  };

  Widget.prototype.history_ = function () {
    var out = [];
    this.history.slice(-HISTORY).forEach(function (x) {
      out.push({ role: "user", content: x.q }, { role: "assistant", content: x.a });
    });
    return out;
  };

  // fail shows a failure in the answer's bubble, after any text received.
  function fail(bubble, text, mode, message) {
    bubble.setAttribute("data-mode", mode);
    bubble.setAttribute("data-state", "failed");
    if (text.textContent === "\u2026") text.textContent = "";
    bubble.appendChild(el("span", { "class": "note", role: "alert" }, message));
  }

  Widget.prototype.ask = function (q, bubble, text) {
    var self = this;
    var body = { question: q, history: this.history_(), stream: true };
    if (chain) body.chain = chain;
    var headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
    if (lang) headers["Accept-Language"] = lang;
    if (visitor) headers[visitorHeader] = visitor;
    var got = "", finished = false;
    return fetch(origin + "/v1/ask", { method: "POST", headers: headers, body: JSON.stringify(body), credentials: "omit", mode: "cors" })
      .then(function (resp) {
        keepVisitor(resp);
        if (!resp.ok) return self.refused(resp, bubble, text);
        var type = resp.headers.get("Content-Type") || "";
        if (type.indexOf("text/event-stream") < 0 || !resp.body) {
          return resp.json().then(function (a) {
            got = String(a.answer || "");
            self.finish(bubble, text, got, a, q);
            finished = true;
          });
        }
        bubble.setAttribute("data-state", "streaming");
        return readSSE(resp.body, function (event, data) {
          var v;
          try { v = JSON.parse(data); } catch (e) { return; }
          if (event === "delta" && v && typeof v.text === "string") {
            got += v.text;
            renderText(text, got);
            self.log.scrollTop = self.log.scrollHeight;
          } else if (event === "done") {
            finished = true;
            self.finish(bubble, text, got, v || {}, q);
          } else if (event === "error") {
            finished = true;
            var m = v && v.error && v.error.message;
            fail(bubble, text, "error", "The answer stopped before the end" + (m ? ": " + m : ".") + " Please ask again.");
          }
        }).then(function () {
          if (!finished) {
            fail(bubble, text, "error", "The answer was cut off. Please ask again.");
          }
        });
      })
      .catch(function () {
        if (finished) return;
        fail(bubble, text, "error", got ?
          "The connection dropped before the answer ended. Please ask again." :
          "Cannot reach the assistant right now. Check your connection and try again.");
      });
  };

  Widget.prototype.finish = function (bubble, text, got, done, q) {
    var mode = ["model", "search", "rule"].indexOf(done.mode) >= 0 ? done.mode : "model";
    bubble.setAttribute("data-mode", mode);
    bubble.setAttribute("data-state", "done");
    renderText(text, got);
    renderSources(bubble, done.sources, text);
    if (got) this.history.push({ q: q, a: got });
    if (this.history.length > HISTORY) this.history.splice(0, this.history.length - HISTORY);
    this.log.scrollTop = this.log.scrollHeight;
  };

  // refused shows why the gateway said no before any answer.
  Widget.prototype.refused = function (resp, bubble, text) {
    var wait = retryAfter(resp.headers.get("Retry-After"));
    return resp.json().catch(function () { return {}; }).then(function (b) {
      var e = (b && b.error) || {};
      if (resp.status === 429 && e.code === "caller_limit") {
        fail(bubble, text, "limit", limitText(resp.headers.get("X-Tollfree-Limit"), wait));
      } else if (resp.status === 429 || resp.status === 503) {
        fail(bubble, text, "error", "The assistant is busy right now; please try again" + (waitText(wait) || " in a minute") + ".");
      } else {
        fail(bubble, text, "error", "The assistant could not answer" + (e.message ? ": " + e.message : " (error " + resp.status + ")."));
      }
    });
  };

  function start() {
    if (document.querySelector("[data-tollfree-widget]")) return; // loaded twice
    new Widget();
  }
  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
