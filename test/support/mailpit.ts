/** Reads what the SMTP sink received, through Mailpit's HTTP API. */
export interface SentMail {
  ID: string;
  Subject: string;
  To: { Name: string; Address: string }[];
  Text: string;
  HTML: string;
  MessageID: string;
}

export async function mailTo(mailpitUrl: string, address: string): Promise<SentMail[]> {
  if (!mailpitUrl) throw new Error('MAILPIT_URL is needed to read sent mail');
  const res = await fetch(`${mailpitUrl}/api/v1/search?query=${encodeURIComponent(`to:"${address}"`)}`);
  if (!res.ok) throw new Error(`Mailpit search answered ${res.status}`);
  const list = (await res.json()) as { messages: { ID: string }[] };
  return Promise.all(
    list.messages.map(async (m) => {
      const detail = await fetch(`${mailpitUrl}/api/v1/message/${m.ID}`);
      return (await detail.json()) as SentMail;
    }),
  );
}
