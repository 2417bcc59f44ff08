// The pricing page's one script (served from /pricing.js, the page's CSP allows only same-origin
// scripts): sign in or sign up, ask for a checkout, go to the provider's page. The account token
// lives in this page's memory only and is gone when the page is left.
const form = document.getElementById('subscribe');
const status = document.getElementById('status');

async function post(path, body, token) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(answer.error || `${path} answered ${res.status}`);
  return answer;
}

if (form && status) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const tier = event.submitter?.value;
    if (tier !== 'pro' && tier !== 'team') return;
    const data = new FormData(form);
    const email = String(data.get('email') || '');
    const password = String(data.get('password') || '');
    const create = data.get('create') === 'on';
    status.textContent = create ? 'Creating your account…' : 'Signing in…';
    try {
      const session = create
        ? await post('/auth/signup', { email, password, name: String(data.get('name') || '') || email.split('@')[0] })
        : await post('/auth/login', { email, password });
      status.textContent = `Starting the ${tier} checkout…`;
      const { url } = await post('/billing/checkout', { tier }, session.token);
      window.location.assign(url);
    } catch (err) {
      status.textContent = err instanceof Error ? err.message : String(err);
    }
  });
}
