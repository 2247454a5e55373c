// The verification link's page, in the person's browser (src/modules/links/page/render.ts writes its HTML): moves between the
// steps, takes the selfie (the camera, or a chosen photo) or runs the liveness check (head poses before
// the camera, in a session's order), and sends everything once, as JSON, with the form's CSRF token. Every word comes from the server (messages.en.json); nothing is written as HTML.
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var data = JSON.parse($('page-data').textContent);
  var m = data.messages;
  var steps = data.requireFace ? ['consent', 'vnin', 'selfie', 'send'] : ['consent', 'vnin', 'send'];
  var live = data.liveness;
  var state = { vnin: '', selfie: null, pending: null, stream: null, liveness: null, tries: 0, run: 0 };
  var MAX_SIDE = 1024;
  /** The face part is ready to send: the selfie, or the liveness check's frames. */
  function faceReady() { return live ? state.liveness !== null : state.selfie !== null; }

  function fill(text, vars) {
    return text.replace(/\{(\w+)\}/g, function (all, k) { return Object.prototype.hasOwnProperty.call(vars, k) ? String(vars[k]) : all; });
  }
  function say(text) { $('status').textContent = text || ''; }
  function fail(text) { $('error').textContent = text || ''; if (!text) $('contact').hidden = true; }
  /** Where the page cannot go on by itself: who to turn to (the organisation's support contact). */
  function helpShown() { $('contact').hidden = false; }

  // The step reached survives a reload, or a tab the phone discarded while the person was dialling:
  // the step and this link's path only, in this tab's session storage. The vNIN and the selfie stay in
  // this page's memory, so a restored step past the vNIN comes back to the vNIN step.
  var KEY = 'verification-link-step';
  function remember(name) {
    try {
      if (name === 'consent' || name === 'result') sessionStorage.removeItem(KEY);
      else sessionStorage.setItem(KEY, JSON.stringify({ link: location.pathname, step: name }));
    } catch (e) { /* storage refused (private mode): the page still works, from step 1 after a reload */ }
  }
  function restored() {
    try {
      var saved = JSON.parse(sessionStorage.getItem(KEY) || 'null');
      // Past the vNIN step, what the person gave is gone with the old page: back to the vNIN step.
      return saved && saved.link === location.pathname && steps.indexOf(saved.step) > 0 ? 'vnin' : null;
    } catch (e) { return null; }
  }

  function show(name, keepError) {
    remember(name);
    if (name !== 'selfie') stopCamera();
    ['consent', 'vnin', 'selfie', 'send', 'result'].forEach(function (s) {
      var el = $('step-' + s);
      if (el) el.hidden = s !== name;
    });
    var i = steps.indexOf(name);
    $('progress').textContent = i >= 0 ? fill(m.step_of, { n: i + 1, total: steps.length }) : '';
    if (!keepError) fail('');
    say('');
    var h = $('h-' + name);
    if (h) h.focus();
  }

  $('consent-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    if (!$('agree').checked) {
      fail(m.intro.must_agree);
      $('agree').focus();
      return;
    }
    show('vnin');
  });

  $('vnin-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var input = $('vnin');
    var v = input.value.replace(/\s+/g, '').toUpperCase();
    if (!/^[A-Z0-9]{16}$/.test(v)) {
      input.setAttribute('aria-invalid', 'true');
      fail(m.vnin.invalid);
      input.focus();
      return;
    }
    input.removeAttribute('aria-invalid');
    state.vnin = v;
    show(data.requireFace ? 'selfie' : 'send');
  });

  // ---- the selfie ----
  function stopCamera() {
    // A liveness check under way stops with its camera.
    state.run++;
    if ($('start-camera')) $('start-camera').disabled = false;
    if (state.stream) state.stream.getTracks().forEach(function (t) { t.stop(); });
    state.stream = null;
    if ($('camera')) $('camera').hidden = true;
    if ($('camera-start')) $('camera-start').hidden = false;
  }
  /** A JPEG data: URL of the source, at most MAX_SIDE pixels on its longer side. */
  function toJpeg(source, width, height) {
    var scale = Math.min(1, MAX_SIDE / Math.max(width, height));
    var canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    canvas.getContext('2d').drawImage(source, 0, 0, canvas.width, canvas.height);
    return canvas.toDataURL('image/jpeg', 0.9);
  }
  /** Shown before anything is sent: the person keeps it or takes another. */
  function preview(dataUrl) {
    state.pending = dataUrl;
    $('preview-img').src = dataUrl;
    $('preview').hidden = false;
    $('h-preview').focus();
  }

  if (data.requireFace && !live) {
    $('start-camera').addEventListener('click', function () {
      fail('');
      if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
        fail(m.selfie.camera_failed);
        $('file').focus();
        return;
      }
      navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user', width: { ideal: 1280 }, height: { ideal: 1280 } }, audio: false }).then(function (stream) {
        state.stream = stream;
        $('video').srcObject = stream;
        $('camera').hidden = false;
        $('camera-start').hidden = true;
        $('preview').hidden = true;
        $('take').focus();
      }, function (err) {
        // Refused by the person or the browser: say how to allow it again (Android Chrome, iOS Safari).
        var denied = err && (err.name === 'NotAllowedError' || err.name === 'SecurityError');
        fail(denied ? m.help.camera_denied : m.selfie.camera_failed);
        $('file').focus();
      });
    });
    $('take').addEventListener('click', function () {
      var video = $('video');
      if (!video.videoWidth) return;
      var url = toJpeg(video, video.videoWidth, video.videoHeight);
      stopCamera();
      preview(url);
    });
    $('file').addEventListener('change', function () {
      var file = this.files && this.files[0];
      if (!file) return;
      fail('');
      stopCamera();
      createImageBitmap(file).then(function (bitmap) {
        preview(toJpeg(bitmap, bitmap.width, bitmap.height));
      }, function () {
        fail(m.selfie.unreadable);
      });
    });
    $('use').addEventListener('click', function () {
      if (!state.pending) {
        fail(m.selfie.needed);
        return;
      }
      state.selfie = state.pending;
      show('send');
    });
    $('retake').addEventListener('click', function () {
      state.pending = null;
      state.selfie = null;
      $('preview').hidden = true;
      $('file').value = '';
      $('start-camera').focus();
    });
  }

  // ---- the liveness check ----
  // The server draws the poses' order (a session); the page shows an oval to place the face in, then
  // each prompt, and takes two frames of each pose from the camera (the middle and the end of it),
  // stamped by one clock (performance.now). The frames are judged on the server only.
  var ARROWS = { front: '\u25CE', turn_left: '\u2190', turn_right: '\u2192', look_up: '\u2191' };
  var LIVE_SIDE = 720;
  var lastAt = -1;
  var CANCELLED = {};
  function after(ms) { return new Promise(function (done) { setTimeout(done, ms); }); }
  /** Whole milliseconds of one clock, strictly increasing. */
  function stamp() {
    var t = Math.round(performance.now());
    if (t <= lastAt) t = lastAt + 1;
    lastAt = t;
    return t;
  }
  function prompt(step, words) {
    var p = $('liveness-prompt');
    if (step) p.setAttribute('data-liveness-step', step);
    else p.removeAttribute('data-liveness-step');
    $('prompt-arrow').textContent = step ? ARROWS[step] : '';
    $('prompt-words').textContent = words;
  }
  /** One frame of the video as it is (not mirrored), JPEG, at most LIVE_SIDE pixels on its longer side. */
  function frame(step) {
    var video = $('video');
    var scale = Math.min(1, LIVE_SIDE / Math.max(video.videoWidth, video.videoHeight));
    var canvas = document.createElement('canvas');
    canvas.width = Math.round(video.videoWidth * scale);
    canvas.height = Math.round(video.videoHeight * scale);
    canvas.getContext('2d').drawImage(video, 0, 0, canvas.width, canvas.height);
    return { step: step, image: canvas.toDataURL('image/jpeg', 0.9), captured_at_ms: stamp() };
  }
  /** POSTs JSON to this page's path + `path`; resolves `{ok, answer}` (an unreadable answer is `{}`). */
  function post(path, body) {
    return fetch(location.pathname.replace(/\/$/, '') + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      credentials: 'omit',
      body: JSON.stringify(body),
    }).then(function (res) {
      return res.json().then(function (answer) { return { ok: res.ok, answer: answer }; }, function () { return { ok: false, answer: {} }; });
    });
  }
  /** Resolves once the video has its first frame (a camera takes a moment to start). */
  function videoReady(my) {
    var check = function (n) {
      if (my !== state.run) return Promise.reject(CANCELLED);
      if ($('video').videoWidth > 0) return Promise.resolve();
      if (n > 200) return Promise.reject(new Error('no video'));
      return after(50).then(function () { return check(n + 1); });
    };
    return check(0);
  }
  function capture(session, my) {
    var frames = [];
    var still = function () { if (my !== state.run) throw CANCELLED; };
    // The oval first, then "Look at the camera", then the session's poses in its order.
    var chain = videoReady(my).then(function () { return after(1500); });
    ['front'].concat(session.challenges).forEach(function (step) {
      chain = chain.then(function () {
        still();
        prompt(step, live[step]);
        return after(step === 'front' ? 800 : 1000);
      }).then(function () {
        still();
        frames.push(frame(step));
        return after(step === 'front' ? 400 : 800);
      }).then(function () {
        still();
        frames.push(frame(step));
      });
    });
    return chain.then(function () {
      state.liveness = { session_id: session.session_id, frames: frames };
      prompt(null, '');
      show('send');
      say(live.done);
    });
  }
  function cameraRefused(err) {
    // Refused by the person or the browser: say how to allow it again (Android Chrome, iOS Safari).
    var denied = err && (err.name === 'NotAllowedError' || err.name === 'SecurityError');
    stopCamera();
    say('');
    fail(denied ? live.camera_denied : live.no_camera);
    helpShown();
    $('start-camera').focus();
  }
  function startCheck() {
    fail('');
    if (state.tries >= 3) {
      fail(live.no_more);
      helpShown();
      return;
    }
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      fail(live.no_camera);
      helpShown();
      return;
    }
    stopCamera();
    var my = state.run;
    state.liveness = null;
    $('start-camera').disabled = true;
    say(live.starting);
    navigator.mediaDevices.getUserMedia({ video: { facingMode: 'user', width: { ideal: 1280 }, height: { ideal: 1280 } }, audio: false }).then(function (stream) {
      if (my !== state.run) {
        stream.getTracks().forEach(function (t) { t.stop(); });
        return;
      }
      state.stream = stream;
      $('video').srcObject = stream;
      prompt(null, live.place);
      $('camera').hidden = false;
      $('camera-start').hidden = true;
      say('');
      // A new session for each try: its poses in an order drawn now.
      post('/liveness-session', { csrf: $('send-form').elements.csrf.value }).then(function (r) {
        if (my !== state.run) return;
        if (!r.ok) {
          stopCamera();
          fail(r.answer.detail || m.errors.network);
          helpShown();
          return;
        }
        return capture(r.answer, my);
      }).catch(function (err) {
        if (err === CANCELLED) return;
        stopCamera();
        fail(err instanceof TypeError ? m.errors.network : live.no_camera);
        helpShown();
      });
    }, cameraRefused);
  }
  if (live) $('start-camera').addEventListener('click', startCheck);

  // ---- the vNIN's help ----
  $('copy-ussd').addEventListener('click', function () {
    var done = function () { $('copy-status').textContent = m.help.copied; };
    var failed = function () { $('copy-status').textContent = m.help.copy_failed; };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(data.ussd).then(done, failed);
    else failed();
  });

  // ---- a submission that stopped ----
  var GONE = ['expired', 'used_up', 'revoked', 'not_found'];
  /** Who to turn to, and (unless the link itself is gone) a way back to the send step with everything kept. */
  function stoppedHelp(code) {
    helpShown();
    $('retry-line').hidden = GONE.indexOf(code) >= 0;
  }
  $('retry').addEventListener('click', function () {
    $('retry-line').hidden = true;
    show(state.vnin === '' ? 'vnin' : data.requireFace && !faceReady() ? 'selfie' : 'send');
  });

  /**
   * The receipt of the submission just answered, whenever it recorded a verification (found, not found,
   * failed or not decided yet); with its reference when the result page does not show it already.
   */
  function keptShown(answer, withRef) {
    $('kept').hidden = !answer.receipt;
    $('kept-ref').textContent = (withRef && answer.reference) || '';
    $('kept-ref').hidden = !(withRef && answer.reference);
    if (answer.receipt) $('receipt-link').href = answer.receipt;
  }

  // ---- sending ----
  $('back').addEventListener('click', function () { show('vnin'); });
  $('send-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var form = ev.target;
    var button = $('send');
    if (data.requireFace && !faceReady()) {
      show('selfie');
      fail(live ? live.needed : m.selfie.needed);
      return;
    }
    button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    fail('');
    keptShown({}, false);
    say(m.send.sending);
    var body = { csrf: form.elements.csrf.value, consent: true, vnin: state.vnin };
    if (data.requireFace && live) body.liveness = state.liveness;
    else if (data.requireFace) body.selfie = state.selfie;
    post('/submit', body).then(function (r) {
      button.disabled = false;
      form.removeAttribute('aria-busy');
      var step = r.answer.step || (r.ok ? 'result' : 'send');
      if (r.ok || step === 'result') {
        // Kept when the submission stopped: "Try again" sends it again.
        if (r.ok) {
          state.selfie = null;
          state.liveness = null;
        }
        // A 200 is the result (verified, not verified, or not decided yet: `verdict` null); else a stop.
        $('h-result').textContent = r.ok ? r.answer.heading : m.result.stopped_heading;
        $('result-text').textContent = r.answer.detail || '';
        $('result-next').textContent = (r.ok && r.answer.next) || '';
        $('result-ref').textContent = (r.ok && r.answer.reference) || '';
        $('step-result').setAttribute('data-verdict', r.ok ? (r.answer.verdict || 'pending') : 'stopped');
        keptShown(r.answer, !r.ok);
        show('result');
        // Every result ends the flow: who to turn to is on it, verified or not (issue: no dead ends).
        if (!r.ok) stoppedHelp(r.answer.code);
        else helpShown();
        return;
      }
      // "Try again" keeps what the person entered: the vNIN stays, to correct or replace.
      if (step === 'vnin') $('vnin').value = state.vnin;
      if (step === 'selfie' && live) {
        // A session is judged once: the check again, with a new one; a failed check at most twice more.
        state.liveness = null;
        show('selfie', true);
        if (r.answer.code !== 'liveness_failed') {
          fail(r.answer.detail || live.needed);
          return;
        }
        state.tries++;
        var left = 3 - state.tries;
        fail(left <= 0 ? live.no_more : r.answer.detail + ' ' + (left === 1 ? live.tries_left_one : fill(live.tries_left, { n: left })));
        if (left <= 0) {
          $('camera-start').hidden = true;
          helpShown();
        }
        return;
      }
      if (step === 'selfie') {
        state.selfie = null;
        state.pending = null;
        $('preview').hidden = true;
        $('file').value = '';
      }
      show(step, true);
      fail(r.answer.detail || m.errors.network);
      // Not found, or failed after the lookup was recorded: the reference and the receipt all the same.
      keptShown(r.answer, true);
      // Whatever stopped it (a vNIN NIMC does not know, a selfie without a face, a failure): whom to ask.
      helpShown();
    }, function () {
      button.disabled = false;
      form.removeAttribute('aria-busy');
      say('');
      fail(m.errors.network);
    });
  });

  var back = restored();
  if (back) {
    // Consent was given in this tab before the reload; the box says so again.
    $('agree').checked = true;
    show(back);
  }
})();
