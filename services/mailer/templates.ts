import type { Mail } from './transport.ts';

/** E-mail bodies (pure). Every interpolated value is escaped in the HTML part. */
export const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

export function welcomeMail(user: { userId: string; email: string; name: string }, domain = 'svc.local'): Mail {
  return {
    to: user.email,
    subject: `Welcome to svc, ${user.name}`,
    messageId: `<welcome.${user.userId}@${domain}>`,
    text: `Hello ${user.name},\n\nyour svc account for ${user.email} is ready. You are on the free tier; upgrade any time for the vision RAG API.\n\n— svc\n`,
    html: `<p>Hello ${escapeHtml(user.name)},</p><p>your svc account for <strong>${escapeHtml(user.email)}</strong> is ready. You are on the free tier; upgrade any time for the vision RAG API.</p><p>— svc</p>`,
  };
}
