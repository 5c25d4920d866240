// Renders the page as compact text for a model and collects its interactive
// elements, numbered in reading order. Called with the character budget;
// returns {text, els, scrollY, scrollHeight, width, height}. Password values
// never leave the page: a filled password field reads "•••".
(maxChars) => {
  const out = [];
  const els = [];
  const descs = [];
  let line = '';
  let size = 0;
  let full = false;
  const clip = (s, n) => {
    s = (s || '').replace(/\s+/g, ' ').trim();
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  };
  const q = (s) => JSON.stringify(s);
  const emit = (s) => {
    if (full) return;
    out.push(s);
    size += s.length + 1;
    if (size > maxChars) full = true;
  };
  const brk = () => {
    const t = line.replace(/\s+/g, ' ').trim();
    line = '';
    if (t) emit(t);
  };
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE', 'PARAM', 'SOURCE', 'TRACK']);
  const ROLES = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox', 'option',
    'menuitem', 'menuitemcheckbox', 'menuitemradio', 'switch', 'tab', 'slider', 'spinbutton', 'treeitem']);
  const INTERACTIVE = 'a[href],button,input,select,textarea,summary,[role=button],[role=link],[role=checkbox],[role=tab],[role=menuitem],[contenteditable=""],[contenteditable=true]';
  const origin = location.origin;
  const focused = (() => {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  })();

  const roleOf = (el, tag, style) => {
    const r = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
    if (ROLES.has(r)) return r;
    switch (tag) {
      case 'A': return el.hasAttribute('href') ? 'link' : null;
      case 'BUTTON': return 'button';
      case 'SUMMARY': return 'button';
      case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'TEXTAREA': return 'textbox';
      case 'INPUT': {
        const t = (el.type || 'text').toLowerCase();
        if (t === 'hidden') return null;
        if (t === 'checkbox' || t === 'radio') return t;
        if (t === 'submit' || t === 'button' || t === 'reset' || t === 'image') return 'button';
        if (t === 'range') return 'slider';
        if (t === 'file') return 'file';
        if (t === 'color') return 'color';
        if (t === 'search') return 'searchbox';
        return 'textbox';
      }
    }
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'textbox';
    if (tag === 'LABEL' || tag === 'BODY' || tag === 'HTML') return null;
    const pointer = style.cursor === 'pointer' && !(el.parentElement && getComputedStyle(el.parentElement).cursor === 'pointer');
    if (pointer || el.hasAttribute('onclick') || (el.hasAttribute('tabindex') && el.tabIndex >= 0 && r !== 'dialog' && r !== 'region')) {
      // A clickable box that holds real controls is a container, not a control.
      return el.querySelector(INTERACTIVE) ? null : 'clickable';
    }
    return null;
  };

  const textWithout = (root, skip) => {
    let s = '';
    const w = (n) => {
      if (n === skip) return;
      if (n.nodeType === 3) s += n.data;
      else if (n.nodeType === 1 && !SKIP.has(n.tagName) && n.tagName !== 'SELECT' && n.tagName !== 'TEXTAREA') n.childNodes.forEach(w);
    };
    w(root);
    return s;
  };

  const nameOf = (el, tag) => {
    const lb = el.getAttribute('aria-labelledby');
    if (lb) {
      const t = lb.split(/\s+/).map((id) => {
        const e = el.getRootNode().getElementById ? el.getRootNode().getElementById(id) : document.getElementById(id);
        return e ? e.innerText || e.textContent : '';
      }).join(' ');
      if (t.trim()) return clip(t, 100);
    }
    const al = el.getAttribute('aria-label');
    if (al && al.trim()) return clip(al, 100);
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      if (el.labels && el.labels.length) {
        const t = Array.from(el.labels).map((l) => textWithout(l, el)).join(' ');
        if (t.trim()) return clip(t, 100);
      }
      if (tag === 'INPUT') {
        const t = (el.type || '').toLowerCase();
        if (t === 'submit' || t === 'button' || t === 'reset') return clip(el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''), 100);
        if (t === 'image') return clip(el.alt || el.value || 'Submit', 100);
      }
      const ph = el.getAttribute('placeholder');
      if (ph && ph.trim()) return clip(ph, 100);
      return clip(el.getAttribute('title') || el.getAttribute('name') || '', 100);
    }
    let t = el.innerText;
    if (!t || !t.trim()) {
      const img = el.querySelector('img[alt],[aria-label],svg title');
      if (img) t = img.getAttribute('alt') || img.getAttribute('aria-label') || img.textContent;
    }
    if (!t || !t.trim()) t = el.getAttribute('title') || '';
    return clip(t, 100);
  };

  const hrefOf = (el) => {
    const h = el.href;
    if (!h || typeof h !== 'string' || /^javascript:/i.test(h)) return '';
    if (h.startsWith(origin + '/')) return clip(h.slice(origin.length), 150);
    return clip(h, 150);
  };

  const describe = (el, tag, role) => {
    const n = els.length + 1;
    els.push(el);
    const head = role + ' ' + q(nameOf(el, tag));
    descs.push(head);
    let s = '[' + n + '] ' + head;
    const type = tag === 'INPUT' ? (el.type || 'text').toLowerCase() : '';
    if (role === 'textbox' || role === 'searchbox') {
      if (type && type !== 'text' && type !== 'search') s += ' type=' + type;
      let v;
      if (type === 'password') v = el.value ? '•••' : '';
      else if (tag === 'INPUT' || tag === 'TEXTAREA') v = clip(el.value, 200);
      else v = clip(el.innerText, 200);
      s += ' value=' + q(v);
      const ph = el.getAttribute('placeholder');
      if (ph && ph.trim() && clip(ph, 100) !== nameOf(el, tag)) s += ' placeholder=' + q(clip(ph, 60));
    } else if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
      const c = tag === 'INPUT' ? el.checked : el.getAttribute('aria-checked') === 'true';
      s += c ? ' checked' : ' unchecked';
    } else if (tag === 'SELECT') {
      const sel = Array.from(el.selectedOptions).map((o) => clip(o.label || o.text, 60));
      s += ' value=' + q(sel.join(', '));
      const opts = Array.from(el.options);
      s += ' options=[' + opts.slice(0, 25).map((o) => q(clip(o.label || o.text, 60))).join(', ') +
        (opts.length > 25 ? ', …' + (opts.length - 25) + ' more' : '') + ']';
    } else if (role === 'link') {
      const h = hrefOf(el);
      if (h) s += ' href=' + h;
      if (el.target === '_blank') s += ' (new tab)';
    } else if (role === 'slider' && tag === 'INPUT') {
      s += ' value=' + q(el.value);
    }
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') s += ' disabled';
    if (el.readOnly) s += ' readonly';
    const ex = el.getAttribute('aria-expanded');
    if (ex === 'true') s += ' expanded';
    else if (ex === 'false') s += ' collapsed';
    if (role === 'tab' && el.getAttribute('aria-selected') === 'true') s += ' selected';
    if (el === focused) s += ' focused';
    brk();
    emit(s);
  };

  const BLOCKISH = /^(block|flex|grid|list-item|flow-root|table$|inline-table$|table-row|table-caption|table-header-group|table-footer-group)/;

  const walk = (node, ctx) => {
    if (full) return;
    if (node.nodeType === 3) {
      if (!ctx.noText) line += node.data;
      return;
    }
    if (node.nodeType === 11) { // shadow root
      node.childNodes.forEach((c) => walk(c, ctx));
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node;
    const tag = el.tagName;
    if (SKIP.has(tag)) return;
    if (el.getAttribute('aria-hidden') === 'true' || el.inert) return;
    const style = getComputedStyle(el);
    if (style.display === 'contents') {
      (el.shadowRoot || el).childNodes.forEach((c) => walk(c, ctx));
      return;
    }
    if (style.display === 'none' || style.visibility === 'hidden' || style.visibility === 'collapse') return;
    if (typeof el.checkVisibility === 'function' && !el.checkVisibility({ contentVisibilityAuto: false })) return;
    const block = BLOCKISH.test(style.display) || tag === 'BR' || tag === 'HR';
    if (block) brk();
    if (tag === 'BR' || tag === 'HR') return;

    if (tag === 'IFRAME' || tag === 'FRAME') {
      let doc = null;
      try { doc = el.contentDocument; } catch (e) { doc = null; }
      brk();
      if (doc && doc.body) {
        walk(doc.body, ctx);
        brk();
      } else {
        let src = el.src || '';
        try { src = new URL(src).origin; } catch (e) { /* keep */ }
        emit('[frame from ' + src + ': not readable here]');
      }
      return;
    }
    if (tag === 'IMG' || tag === 'svg') {
      const alt = tag === 'IMG' ? el.getAttribute('alt') : el.getAttribute('aria-label');
      if (alt && alt.trim() && !ctx.noText) line += ' (image: ' + clip(alt, 80) + ') ';
      return;
    }
    const role = roleOf(el, tag, style);
    if (role) {
      describe(el, tag, role);
      // A control's text is its name; only a clickable box is looked into
      // when it holds nothing interactive (then its text is its name too).
      return;
    }
    const hm = /^H([1-6])$/.exec(tag);
    const heading = hm ? +hm[1] : el.getAttribute('role') === 'heading' ? +(el.getAttribute('aria-level') || 2) : 0;
    if (heading) {
      brk();
      const t = clip(el.innerText, 200);
      if (t) emit('#'.repeat(Math.min(heading, 6)) + ' ' + t);
      (el.shadowRoot || el).childNodes.forEach((c) => walk(c, { ...ctx, noText: true }));
      brk();
      return;
    }
    if (tag === 'LI' || el.getAttribute('role') === 'listitem') {
      brk();
      line = '- ';
    }
    if ((tag === 'TD' || tag === 'TH') && el.cellIndex > 0) line += ' | ';
    let inner = ctx;
    if (tag === 'LABEL' && el.control) inner = { ...ctx, noText: true };
    if (tag === 'SLOT') {
      const assigned = el.assignedNodes({ flatten: true });
      (assigned.length ? assigned : Array.from(el.childNodes)).forEach((c) => walk(c, inner));
    } else {
      (el.shadowRoot || el).childNodes.forEach((c) => walk(c, inner));
    }
    if (block || tag === 'LI') brk();
  };

  if (document.body) walk(document.body, { noText: false });
  brk();
  return {
    text: out.join('\n'),
    full,
    els,
    descs,
    scrollY: Math.round(window.scrollY),
    scrollHeight: Math.round(document.documentElement.scrollHeight),
    width: window.innerWidth,
    height: window.innerHeight,
  };
}
